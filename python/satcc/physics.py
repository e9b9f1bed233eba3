"""Physical constants of the TLE geometry (tle.py), as satcc-core's constellation.rs and geo.rs
use them."""

SPEED_OF_LIGHT_M_S = 299_792_458.0
EARTH_RADIUS_M = 6_371_000.0  # mean radius, as satellite-facts.md's derivations
