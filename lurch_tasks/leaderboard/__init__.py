"""Leaderboard: submission format, validation, ranked tables."""
