"""Relax Rollout Viewer: a reusable Django app for Relax rollout step files."""
