"""Rating maths, pure (no I/O): openskill's Plackett-Luce over a race's whole ranking.

A player has one rating per game: `mu` (the estimated skill) and `sigma` (how unsure that
estimate is). A rated race updates every rated seat at once from the race's places; equal
places are ties and move the tied players alike. Shown to people as one number:

    rating = round(1000 + 28 * (mu - 3 * sigma))

`mu - 3 sigma` is openskill's ordinal (a skill the player is very likely above). 28 points
per unit of mu puts differences on the familiar Elo scale: between two settled players,
about 400 points apart means the stronger one wins 10 races out of 11. A new player starts
at 1000 (mu 25, sigma 25/3: ordinal 0); an average player settles near 1400-1500.

- Provisional: while sigma is above `PROVISIONAL_SIGMA` (about the first ten two-player
  races, fewer with more players per race); shown with a "?" and left off the rating
  leaderboards.
- Inactivity: sigma grows again with the time since the last rated race, as Glicko's
  deviation does: sigma^2 grows by `SIGMA_GROWTH_PER_DAY` per day, never above the
  starting sigma. A settled sigma of 3 is provisional again after about nine months without a
  rated race; the growth is applied when the rating is shown and before the next update.
- Bots are never rated, and a rated race needs at least two rated players (`RATED_MIN`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

__all__ = [
    "DAY",
    "PROVISIONAL_SIGMA",
    "RATED_MIN",
    "SIGMA_GROWTH_PER_DAY",
    "START",
    "Rating",
    "display",
    "rate",
]

DAY = 86400.0
MODEL = PlackettLuce()
START_MU = MODEL.mu
START_SIGMA = MODEL.sigma
PROVISIONAL_SIGMA = 6.0
SIGMA_GROWTH_PER_DAY = 0.1  # added to sigma^2 per day without a rated race
RATED_MIN = 2
SCALE = 28.0
BASE = 1000.0


@dataclass(frozen=True, slots=True)
class Rating:
    mu: float
    sigma: float

    @property
    def provisional(self) -> bool:
        return self.sigma > PROVISIONAL_SIGMA

    @property
    def display(self) -> int:
        return display(self.mu, self.sigma)

    def aged(self, seconds: float) -> Rating:
        """This rating after `seconds` without a rated race: sigma grown again."""
        if seconds <= 0:
            return self
        grown = math.sqrt(self.sigma**2 + SIGMA_GROWTH_PER_DAY * seconds / DAY)
        return Rating(self.mu, min(START_SIGMA, max(self.sigma, grown)))


START = Rating(START_MU, START_SIGMA)


def display(mu: float, sigma: float) -> int:
    return round(BASE + SCALE * (mu - 3.0 * sigma))


def rate(ratings: Sequence[Rating], places: Sequence[int]) -> list[Rating]:
    """The ratings after one race, in the same order: `places` 1 = best, equal = tied."""
    if len(ratings) != len(places):
        raise ValueError("one place per rating")
    if len(ratings) < RATED_MIN:
        return list(ratings)
    teams = [[MODEL.rating(mu=r.mu, sigma=r.sigma)] for r in ratings]
    rated = MODEL.rate(teams, ranks=[float(place) for place in places])
    return [Rating(team[0].mu, team[0].sigma) for team in rated]
