"""The HTTP edge: the app factory, routes and bodies, the WebSocket loop, the sweeper, admission
control, draining, and the web client's files."""
