"""Torch-facing sources: the traced backend and each hook into torch (Dynamo's structured
trace, AOT Autograd, torch.export, debugging aids), turned into typed events for the
recorder, each routed to the recorder of the traced backend that owns the compile.
Each private hook is isolated in one module.
"""
