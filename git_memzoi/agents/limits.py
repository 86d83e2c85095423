"""The hook's input limits, with nothing else, so that a hook process knows them before it loads its modules."""

#: The largest event read. A Write event carries the whole file the model wrote, which its output
#: limit keeps far below this; anything larger is not read, let alone parsed.
MAX_EVENT_BYTES = 4 * 1024 * 1024
