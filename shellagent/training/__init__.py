"""Fine-tuning the agent's model on verified trajectories: a LoRA adapter in GGUF.

``data`` turns an SFT export into token sequences exactly as the agent prompts the model
at run time (its chat template, its tokenizer, loss only on the model's own replies);
``train`` runs LoRA training with PyTorch and PEFT on a dequantized copy of the base;
``export`` writes the adapter as a GGUF file llama.cpp applies over the quantized base.
Needs the ``train`` extra (``pip install shellagent[train]`` / ``./install.sh --train``).
"""
