"""Errors that the core and the papers raise alike; imports nothing of the project, so any module can."""


class ConfigError(ValueError):
    """A config value outside what the schema or a paper's own checks allow."""
