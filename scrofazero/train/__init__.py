"""Gongzhu training: self-play records, replay buffer, learner (loss, optimiser step) and the
training loop (train.py); the checkpoint format lives in nn/checkpoint.py."""
