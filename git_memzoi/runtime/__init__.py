"""Runtime state: the MEMZOI_HOME layout, config precedence, the lifecycle lock, atomic writes, the clock."""

#: [retention] session_lease_hours when no config file sets it (config.RetentionConfig's default; kept
#: here so that a start-up path can know it without loading the config module).
DEFAULT_SESSION_LEASE_HOURS = 24.0
