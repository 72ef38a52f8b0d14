"""The names of units and currencies that agents write in place of one another."""

from __future__ import annotations

__all__ = ["CURRENCY_NAMES", "UNIT_NAMES"]

# One unit a line: its symbol, then its names. A name's plural (with "s") is added for it.
# Symbols that stand for two units ("m" for metre and minute) stand for the one a field
# named "unit" most often means; "min" is the minute.
_UNITS = """
mm|millimeter|millimetre
cm|centimeter|centimetre
m|meter|metre
km|kilometer|kilometre|kms
in|inch|inches
ft|foot|feet
yd|yard|yds
mi|mile
nmi|nautical mile
mg|milligram|milligramme
g|gram|gramme
kg|kilogram|kilogramme|kilo|kgs
tonne|metric ton
lb|pound|lbs
oz|ounce
st|stone
ml|milliliter|millilitre
l|liter|litre
gal|gallon
qt|quart
pint
cup|cups
tbsp|tablespoon|tbs|tbl
tsp|teaspoon
fl oz|fluid ounce
m2|square meter|square metre|sq m|sq meter|sq metre|m²
km2|square kilometer|square kilometre|sq km|km²
ft2|square foot|square feet|sq ft|ft²
mi2|square mile|sq mi|mi²
ha|hectare
ac|acre
m3|cubic meter|cubic metre|m³
°c|celsius|degrees celsius|degree celsius|centigrade
°f|fahrenheit|degrees fahrenheit|degree fahrenheit
kelvin
s|second|sec|secs
min|minute|mins
h|hour|hr|hrs
d|day
wk|week
mo|month
yr|year|yrs
w|watt
kw|kilowatt
kwh|kilowatt hour|kilowatt-hour
v|volt
a|ampere|amp
hz|hertz
mph|miles per hour|mile per hour
kph|km/h|kmh|kilometers per hour|kilometres per hour|kilometer per hour
j|joule
pa|pascal
psi|pounds per square inch
"""

# ISO 4217 codes with the names agents write for them. "Dollar", "pound", "£" and "C$" are
# left out: each names more than one currency.
_CURRENCIES = """
usd|us dollar|united states dollar|american dollar|us$
eur|euro|€
gbp|british pound|pound sterling|sterling
jpy|japanese yen|yen
cny|chinese yuan|yuan|renminbi|rmb
inr|indian rupee|₹
cad|canadian dollar
aud|australian dollar
nzd|new zealand dollar
chf|swiss franc
sek|swedish krona|swedish kronor
nok|norwegian krone|norwegian kroner
dkk|danish krone|danish kroner
mxn|mexican peso
brl|brazilian real|brazilian reais
krw|south korean won|korean won
rub|russian ruble|russian rouble
try|turkish lira
pln|polish zloty|zloty
zar|south african rand|rand
sgd|singapore dollar
hkd|hong kong dollar
btc|bitcoin
eth|ether|ethereum
"""


def _table(text: str, plural: bool) -> dict[str, str]:
    names: dict[str, str] = {}
    for line in text.strip().splitlines():
        first, *others = line.split("|")
        for name in (first, *others):
            names.setdefault(name, first)
            if plural and len(name) >= 3 and not name.endswith("s"):
                names.setdefault(name + "s", first)
    return names


# Every name or symbol, lower case, to the unit's symbol or the currency's code.
UNIT_NAMES: dict[str, str] = _table(_UNITS, plural=True)
CURRENCY_NAMES: dict[str, str] = _table(_CURRENCIES, plural=True)
