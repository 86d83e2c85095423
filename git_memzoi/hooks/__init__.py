"""Git hook checks: the server's pre-receive / update, the client's pre-commit / pre-push, and install."""

#: True in a process that ends with its one answer (`git memzoi hook …` run by git or CI; set by
#: cli.entry): what a kept tree's load makes then lives until the process ends, and
#: hooks.treecache moves it out of the cyclic collector's reach (gc.freeze). A process that lives
#: on (a test run, a server) leaves it off: a frozen cycle is never freed.
short_lived = False
