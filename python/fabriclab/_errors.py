"""Exceptions shared by the pure-Python modules and the compiled core."""


class ConfigError(ValueError):
    """A bad experiment, sweep or measurements file, a bad override, or an
    unknown paper; the message is the CLI's."""
