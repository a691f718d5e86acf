"""solrace's race server (aiohttp + Redis).

Importing this package must stay cheap and free of aiohttp/Redis, so that the
terminal client can import `server.protocol` alone.
"""
