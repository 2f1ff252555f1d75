"""The agent: the loop, its prompts, and the action schema the model answers in."""
