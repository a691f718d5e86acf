"""Talking to Redis: RESP connections (one node or a cluster), connecting, batching script calls,
health, and the local redis-server supervisor."""
