"""The Kafka wire protocol: primitives, message schemas as data, one codec, headers and framing."""
