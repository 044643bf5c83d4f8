"""The provider layer: one way to call Anthropic, OpenAI, OpenRouter and OpenAI-compatible servers."""
