"""Runtime state: the MEMZOI_HOME layout, config precedence, the lifecycle lock, atomic writes, the clock."""
