"""The protocol's version and its codes: why a request was refused, why a socket closed."""

from __future__ import annotations

import enum

__all__ = ["PROTOCOL_VERSION", "CloseCode", "ErrorCode"]

PROTOCOL_VERSION = 1


class ErrorCode(enum.StrEnum):
    """Why a message was refused. Sent as the string value."""

    BAD_FRAME = "bad_frame"  # not msgpack / not JSON / not a map
    BAD_VERSION = "bad_version"  # "v" missing or not PROTOCOL_VERSION
    UNKNOWN_TYPE = "unknown_type"  # "type" missing or not a known message
    BAD_MESSAGE = "bad_message"  # a field is missing or has the wrong type
    TOO_BIG = "too_big"  # frame over the size cap (the socket is then closed)
    RATE_LIMITED = "rate_limited"  # too many messages; sustained flood closes the socket
    UNKNOWN_ROOM = "unknown_room"
    BAD_TOKEN = "bad_token"  # the seat token is wrong
    ROOM_FULL = "room_full"
    ROOM_CLOSED = "room_closed"  # the race has started or finished: no new seats
    ALREADY_JOINED = "already_joined"  # this socket is already in a room
    NOT_JOINED = "not_joined"  # the socket has no room yet
    NOT_PLAYER = "not_player"  # a spectator tried to play
    NOT_HOST = "not_host"  # only the host (seat 0) may start
    NOT_RUNNING = "not_running"  # before the start or after the end
    NOT_FINISHED = "not_finished"  # rematch before the end
    PLAYER_OUT = "player_out"  # this player has won, is stuck, resigned or forfeited
    STALE_SEQ = "stale_seq"  # seq at or below one already used, and not a re-send
    ILLEGAL_MOVE = "illegal_move"  # the engine refused it; message is its reason
    UNDO_NOT_ALLOWED = "undo_not_allowed"
    HINTS_NOT_ALLOWED = "hints_not_allowed"
    BAD_GAME = "bad_game"  # unknown game name
    BAD_REQUEST = "bad_request"  # HTTP body is wrong
    NOT_FOUND = "not_found"  # HTTP: no such path
    UNKNOWN_TOURNAMENT = "unknown_tournament"
    UNKNOWN_RACE = "unknown_race"  # HTTP: no archived race has that id
    NOT_ORGANISER = "not_organiser"  # the organiser token is missing or wrong
    REGISTRATION_CLOSED = "registration_closed"  # the tournament has started
    TOURNAMENT_FULL = "tournament_full"  # its maximum number of players registered
    NAME_TAKEN = "name_taken"  # another player (of the site, or of the tournament) has that name
    ALREADY_STARTED = "already_started"  # start a tournament that has started
    NOT_ENOUGH_PLAYERS = "not_enough_players"  # start with too few active players
    TOURNAMENT_OVER = "tournament_over"  # the tournament finished (or you lost its knockout)
    REMOVED = "removed"  # the organiser removed this player
    BAD_KEY = "bad_key"  # no player key, or one that signs nobody in (revoked, unknown)
    BAD_NAME = "bad_name"  # a display name that breaks the rules (the message says which)
    BAD_PASSWORD = "bad_password"  # a password that cannot be used (too short or long)
    WRONG_PASSWORD = "wrong_password"  # sign-in: that is not the account's password
    UNKNOWN_PLAYER = "unknown_player"  # no player has that name
    NOT_CLAIMED = "not_claimed"  # sign-in to an account that has no password yet
    ALREADY_CLAIMED = "already_claimed"  # the account has a password already
    BAD_CODE = "bad_code"  # a link code that is unknown, used or expired
    UNKNOWN_DEVICE = "unknown_device"  # none of the player's devices has that id
    NOT_YOUR_SEAT = "not_your_seat"  # that seat (or registration) belongs to another player
    DAILY_TAKEN = "daily_taken"  # today's ranked attempt at that game is used: practice instead
    NOT_YET = "not_yet"  # a daily attempt's replay before one's own attempt or the day is over
    UNAVAILABLE = "unavailable"  # storage (Redis) did not answer: nothing changed, try again
    INTERNAL = "internal"  # a bug on our side; the socket stays open


class CloseCode(enum.IntEnum):
    """WebSocket close codes the server uses."""

    NORMAL = 1000
    GOING_AWAY = 1001  # server shutdown: reconnect (to another process) with your token
    PROTOCOL_ERROR = 1002  # a frame RFC 6455 does not allow (closed by the WebSocket layer)
    BAD_DATA = 1007  # a text frame that is not UTF-8 (closed by the WebSocket layer itself)
    POLICY = 1008  # sustained flood beyond the rate limit
    TOO_BIG = 1009  # a frame over the size cap
    INTERNAL = 1011
    TRY_AGAIN_LATER = 1013  # this process cannot reach its storage: reconnect (elsewhere)
    SLOW_CONSUMER = 4000  # the client did not read fast enough; reconnect and catch up
