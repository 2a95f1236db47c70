"""Hosting a training run: the job spec, the process, its progress, its reading (no Django)."""
