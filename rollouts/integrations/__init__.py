"""Ready integrations of training libraries with the viewer's training host (`manage.py train`).

`rollouts.integrations.sb3`: one callback for a stable-baselines3 `learn()` (the `sb3` extra).
Each integration imports its library only where used, so this package imports without any.
"""
