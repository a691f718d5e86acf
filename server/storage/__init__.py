"""Where rooms live: the `RoomStore` interface with its Redis and memory implementations, the key
names, the Lua scripts and the pub/sub feed."""
