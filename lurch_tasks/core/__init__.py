"""Shared machinery; knows no family."""
