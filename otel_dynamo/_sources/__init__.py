"""Torch-facing sources: the traced backend and each tap into torch (Dynamo's structured
trace, AOT Autograd, torch.export, debugging aids), turned into typed events for the
recorder; ``routing`` sends each frame compile's events to the recorder of the traced
backend that compiles it. Each private hook of torch is isolated in one module.
"""
