"""The release, recorded in every file neardup writes."""

__version__ = "0.1.0"
