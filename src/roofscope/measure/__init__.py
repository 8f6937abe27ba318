"""What runs on the GPU's machine: ``roofscope profile`` and ``roofscope peaks``."""
