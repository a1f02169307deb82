"""trntui: turn measured trial runs into a training cost estimate you can defend."""

__version__ = "0.1.0"
