"""Exceptions shared by the pure-Python modules and the compiled core."""


class ConfigError(ValueError):
    """A bad experiment or sweep file, or a bad override; the message is the CLI's."""
