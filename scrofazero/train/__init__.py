"""Training: self-play records, replay buffer, learner (loss, optimiser step) and checkpoints.

Submodules are imported explicitly (`from scrofazero.train.learner import train_step`) so that
importing the package does not pull in torch or the search.
"""
