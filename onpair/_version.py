"""The version of onpair (stored in every snapshot it writes)."""

__version__ = "0.1.0"
