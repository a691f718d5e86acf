"""solrace's race server (aiohttp + Redis). The wire protocol is the top-level `protocol`
package, shared with the clients."""
