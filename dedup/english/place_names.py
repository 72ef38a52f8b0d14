"""The names of countries, US states and Canadian provinces, for comparing places.

Country names and ISO 3166 alpha-3 codes as Debian's iso-codes lists them, plus a few
common short forms ("UK", "Russia"); US states by USPS code and name. Two-letter codes are
read as US states, "CA" as California, except in a field named for a country, where they are
ISO 3166 alpha-2 codes (``COUNTRY_CODES``: "CA" is Canada, "CN" China).
"""

from __future__ import annotations

__all__ = ["CITY_ALIASES", "COUNTRY_CODES", "REGION_NAMES"]

# One region a line: its name first, then the other names it goes by.
_COUNTRIES = """
Afghanistan|Islamic Republic of Afghanistan|AFG
Albania|Republic of Albania|ALB
Algeria|People's Democratic Republic of Algeria|DZA
American Samoa|ASM
Andorra|Principality of Andorra|AND
Angola|Republic of Angola|AGO
Anguilla|AIA
Antarctica|ATA
Antigua and Barbuda|ATG
Argentina|Argentine Republic|ARG
Armenia|Republic of Armenia|ARM
Aruba|ABW
Australia|AUS
Austria|Republic of Austria|AUT
Azerbaijan|Republic of Azerbaijan|AZE
Bahamas|Commonwealth of the Bahamas|BHS
Bahrain|Kingdom of Bahrain|BHR
Bangladesh|People's Republic of Bangladesh|BGD
Barbados|BRB
Belarus|Republic of Belarus|BLR
Belgium|Kingdom of Belgium|BEL
Belize|BLZ
Benin|Republic of Benin|BEN
Bermuda|BMU
Bhutan|Kingdom of Bhutan|BTN
Bolivia|Plurinational State of Bolivia|BOL
Bosnia and Herzegovina|Republic of Bosnia and Herzegovina|BIH
Botswana|Republic of Botswana|BWA
Bouvet Island|BVT
Brazil|Federative Republic of Brazil|BRA
British Indian Ocean Territory|IOT
British Virgin Islands|VGB
Brunei Darussalam|BRN
Bulgaria|Republic of Bulgaria|BGR
Burkina Faso|BFA
Burundi|Republic of Burundi|BDI
Cabo Verde|Republic of Cabo Verde|CPV
Cambodia|Kingdom of Cambodia|KHM
Cameroon|Republic of Cameroon|CMR
Canada|CAN
Cayman Islands|CYM
Central African Republic|CAF
Chad|Republic of Chad|TCD
Chile|Republic of Chile|CHL
China|People's Republic of China|CHN
Christmas Island|CXR
Colombia|Republic of Colombia|COL
Comoros|Union of the Comoros|COM
Congo|Republic of the Congo|COG
Cook Islands|COK
Costa Rica|Republic of Costa Rica|CRI
Croatia|Republic of Croatia|HRV
Cuba|Republic of Cuba|CUB
Curaçao|CUW
Cyprus|Republic of Cyprus|CYP
Czechia|Czech Republic|CZE
Côte d'Ivoire|Republic of Côte d'Ivoire|CIV
Democratic Republic of the Congo|DR Congo|DRC|COD
Denmark|Kingdom of Denmark|DNK
Djibouti|Republic of Djibouti|DJI
Dominican Republic|DOM
Dominica|Commonwealth of Dominica|DMA
Ecuador|Republic of Ecuador|ECU
Egypt|Arab Republic of Egypt|EGY
El Salvador|Republic of El Salvador|SLV
Equatorial Guinea|Republic of Equatorial Guinea|GNQ
Eritrea|the State of Eritrea|ERI
Estonia|Republic of Estonia|EST
Eswatini|Kingdom of Eswatini|SWZ
Ethiopia|Federal Democratic Republic of Ethiopia|ETH
Falkland Islands|FLK
Faroe Islands|FRO
Federated States of Micronesia|FSM
Fiji|Republic of Fiji|FJI
Finland|Republic of Finland|FIN
France|French Republic|FRA
French Guiana|GUF
French Polynesia|PYF
French Southern Territories|ATF
Gabon|Gabonese Republic|GAB
Gambia|Republic of the Gambia|GMB
Georgia|GEO
Germany|Federal Republic of Germany|DEU
Ghana|Republic of Ghana|GHA
Gibraltar|GIB
Greece|Hellenic Republic|GRC
Greenland|GRL
Grenada|GRD
Guadeloupe|GLP
Guam|GUM
Guatemala|Republic of Guatemala|GTM
Guernsey|GGY
Guinea-Bissau|Republic of Guinea-Bissau|GNB
Guinea|Republic of Guinea|GIN
Guyana|Republic of Guyana|GUY
Haiti|Republic of Haiti|HTI
Heard Island and McDonald Islands|HMD
Honduras|Republic of Honduras|HND
Hong Kong|Hong Kong Special Administrative Region of China|HKG
Hungary|HUN
Iceland|Republic of Iceland|ISL
India|Republic of India|IND
Indonesia|Republic of Indonesia|IDN
Iran|Islamic Republic of Iran|IRN
Iraq|Republic of Iraq|IRQ
Ireland|IRL
Isle of Man|IMN
Israel|State of Israel|ISR
Italy|Italian Republic|ITA
Jamaica|JAM
Japan|JPN
Jersey|JEY
Jordan|Hashemite Kingdom of Jordan|JOR
Kazakhstan|Republic of Kazakhstan|KAZ
Kenya|Republic of Kenya|KEN
Kiribati|Republic of Kiribati|KIR
Kuwait|State of Kuwait|KWT
Kyrgyzstan|Kyrgyz Republic|KGZ
Laos|Lao People's Democratic Republic|LAO
Latvia|Republic of Latvia|LVA
Lebanon|Lebanese Republic|LBN
Lesotho|Kingdom of Lesotho|LSO
Liberia|Republic of Liberia|LBR
Libya|LBY
Liechtenstein|Principality of Liechtenstein|LIE
Lithuania|Republic of Lithuania|LTU
Luxembourg|Grand Duchy of Luxembourg|LUX
Macao|Macao Special Administrative Region of China|MAC
Madagascar|Republic of Madagascar|MDG
Malawi|Republic of Malawi|MWI
Malaysia|MYS
Maldives|Republic of Maldives|MDV
Mali|Republic of Mali|MLI
Malta|Republic of Malta|MLT
Marshall Islands|Republic of the Marshall Islands|MHL
Martinique|MTQ
Mauritania|Islamic Republic of Mauritania|MRT
Mauritius|Republic of Mauritius|MUS
Mayotte|MYT
Mexico|United Mexican States|MEX
Moldova|Republic of Moldova|MDA
Monaco|Principality of Monaco|MCO
Mongolia|MNG
Montenegro|MNE
Montserrat|MSR
Morocco|Kingdom of Morocco|MAR
Mozambique|Republic of Mozambique|MOZ
Myanmar|Republic of Myanmar|MMR
Namibia|Republic of Namibia|NAM
Nauru|Republic of Nauru|NRU
Nepal|Federal Democratic Republic of Nepal|NPL
Netherlands|Kingdom of the Netherlands|NLD
New Caledonia|NCL
New Zealand|NZL
Nicaragua|Republic of Nicaragua|NIC
Nigeria|Federal Republic of Nigeria|NGA
Niger|Republic of the Niger|NER
Niue|NIU
Norfolk Island|NFK
North Korea|Democratic People's Republic of Korea|PRK
North Macedonia|Republic of North Macedonia|MKD
Northern Mariana Islands|Commonwealth of the Northern Mariana Islands|MNP
Norway|Kingdom of Norway|NOR
Oman|Sultanate of Oman|OMN
Pakistan|Islamic Republic of Pakistan|PAK
Palau|Republic of Palau|PLW
Panama|Republic of Panama|PAN
Papua New Guinea|Independent State of Papua New Guinea|PNG
Paraguay|Republic of Paraguay|PRY
Peru|Republic of Peru|PER
Philippines|Republic of the Philippines|PHL
Pitcairn|PCN
Poland|Republic of Poland|POL
Portugal|Portuguese Republic|PRT
Puerto Rico|PRI
Qatar|State of Qatar|QAT
Romania|ROU
Russian Federation|RUS|Russia
Rwanda|Rwandese Republic|RWA
Réunion|REU
Saint Barthélemy|BLM
Saint Kitts and Nevis|KNA
Saint Lucia|LCA
Saint Pierre and Miquelon|SPM
Saint Vincent and the Grenadines|VCT
Samoa|Independent State of Samoa|WSM
San Marino|Republic of San Marino|SMR
Sao Tome and Principe|Democratic Republic of Sao Tome and Principe|STP
Saudi Arabia|Kingdom of Saudi Arabia|SAU
Senegal|Republic of Senegal|SEN
Serbia|Republic of Serbia|SRB
Seychelles|Republic of Seychelles|SYC
Sierra Leone|Republic of Sierra Leone|SLE
Singapore|Republic of Singapore|SGP
Slovakia|Slovak Republic|SVK
Slovenia|Republic of Slovenia|SVN
Solomon Islands|SLB
Somalia|Federal Republic of Somalia|SOM
South Africa|Republic of South Africa|ZAF
South Georgia and the South Sandwich Islands|SGS
South Korea|KOR
South Sudan|Republic of South Sudan|SSD
Spain|Kingdom of Spain|ESP
Sri Lanka|Democratic Socialist Republic of Sri Lanka|LKA
Sudan|Republic of the Sudan|SDN
Suriname|Republic of Suriname|SUR
Svalbard and Jan Mayen|SJM
Sweden|Kingdom of Sweden|SWE
Switzerland|Swiss Confederation|CHE
Syria|Syrian Arab Republic|SYR
Taiwan|TWN
Tajikistan|Republic of Tajikistan|TJK
Tanzania|United Republic of Tanzania|TZA
Thailand|Kingdom of Thailand|THA
Timor-Leste|Democratic Republic of Timor-Leste|TLS
Togo|Togolese Republic|TGO
Tokelau|TKL
Tonga|Kingdom of Tonga|TON
Trinidad and Tobago|Republic of Trinidad and Tobago|TTO
Tunisia|Republic of Tunisia|TUN
Turkmenistan|TKM
Turks and Caicos Islands|TCA
Tuvalu|TUV
Türkiye|Republic of Türkiye|TUR|Turkey
Uganda|Republic of Uganda|UGA
Ukraine|UKR
United Arab Emirates|ARE
United Kingdom|United Kingdom of Great Britain and Northern Ireland|GBR|UK
United States Minor Outlying Islands|UMI
United States|United States of America|USA|US
Uruguay|Eastern Republic of Uruguay|URY
Uzbekistan|Republic of Uzbekistan|UZB
Vatican City|Holy See|VAT
Vanuatu|Republic of Vanuatu|VUT
Venezuela|Bolivarian Republic of Venezuela|VEN
Vietnam|Viet Nam|Socialist Republic of Viet Nam|VNM
Virgin Islands of the United States|VIR
Wallis and Futuna|WLF
Western Sahara|ESH
Yemen|Republic of Yemen|YEM
Zambia|Republic of Zambia|ZMB
Zimbabwe|Republic of Zimbabwe|ZWE
the State of Palestine|PSE
Åland Islands|ALA
"""

_US_STATES = """
AK|Alaska
AL|Alabama
AR|Arkansas
AZ|Arizona
CA|California
CO|Colorado
CT|Connecticut
DC|District of Columbia
DE|Delaware
FL|Florida
GA|Georgia
HI|Hawaii
IA|Iowa
ID|Idaho
IL|Illinois
IN|Indiana
KS|Kansas
KY|Kentucky
LA|Louisiana
MA|Massachusetts
MD|Maryland
ME|Maine
MI|Michigan
MN|Minnesota
MO|Missouri
MS|Mississippi
MT|Montana
NC|North Carolina
ND|North Dakota
NE|Nebraska
NH|New Hampshire
NJ|New Jersey
NM|New Mexico
NV|Nevada
NY|New York
OH|Ohio
OK|Oklahoma
OR|Oregon
PA|Pennsylvania
RI|Rhode Island
SC|South Carolina
SD|South Dakota
TN|Tennessee
TX|Texas
UT|Utah
VA|Virginia
VT|Vermont
WA|Washington
WI|Wisconsin
WV|West Virginia
WY|Wyoming
"""

_CANADA = """
Alberta|British Columbia|Manitoba|New Brunswick|Newfoundland and Labrador
Northwest Territories|Nova Scotia|Nunavut|Ontario|Prince Edward Island|Quebec
Saskatchewan|Yukon
"""

# Short names of cities that agents write for the full one, with the region each stands in.
# Only unambiguous ones: "LA" is Los Angeles in a place field, and Louisiana in a state field.
CITY_ALIASES: dict[str, tuple[str, str]] = {
    "nyc": ("new york", "new york"), "new york city": ("new york", "new york"),
    "ny": ("new york", "new york"), "la": ("los angeles", "california"),
    "sf": ("san francisco", "california"), "dc": ("washington", "district of columbia"),
    "washington dc": ("washington", "district of columbia"),
    "philly": ("philadelphia", "pennsylvania"), "vegas": ("las vegas", "nevada"),
    "nola": ("new orleans", "louisiana"), "rio": ("rio de janeiro", "brazil"),
    "st louis": ("saint louis", "missouri"), "st paul": ("saint paul", "minnesota"),
    "ft worth": ("fort worth", "texas"), "ft lauderdale": ("fort lauderdale", "florida"),
}  # fmt: skip


def _table() -> dict[str, str]:
    names: dict[str, str] = {}
    for line in _COUNTRIES.strip().splitlines():
        first, *others = line.split("|")
        for name in (first, *others):
            names[name.lower()] = first.lower()
    for line in _CANADA.strip().splitlines():
        for name in line.split("|"):
            names[name.lower()] = name.lower()
    for line in _US_STATES.strip().splitlines():
        code, name = line.split("|")
        state = name.lower()
        if state in names:
            # Georgia the state is not Georgia the country ("GEO"): by name it is the state.
            country = names[state]
            for alias, region in list(names.items()):
                if region == country:
                    names[alias] = f"{country} (country)"
        names[code.lower()] = names[state] = state
    return names


# Every name or code, lower case and without dots, to the region's one name.
REGION_NAMES: dict[str, str] = _table()


# ISO 3166 alpha-2 and alpha-3 codes side by side ("CNCHN"), as Debian's iso-codes lists them.
_ALPHA_2 = """
AWABW AFAFG AOAGO AIAIA AXALA ALALB ADAND AEARE ARARG AMARM ASASM AQATA TFATF AGATG AUAUS
ATAUT AZAZE BIBDI BEBEL BJBEN BFBFA BDBGD BGBGR BHBHR BSBHS BABIH BLBLM BYBLR BZBLZ BMBMU
BOBOL BRBRA BBBRB BNBRN BTBTN BVBVT BWBWA CFCAF CACAN CHCHE CLCHL CNCHN CICIV CMCMR CDCOD
CGCOG CKCOK COCOL KMCOM CVCPV CRCRI CUCUB CWCUW CXCXR KYCYM CYCYP CZCZE DEDEU DJDJI DMDMA
DKDNK DODOM DZDZA ECECU EGEGY ERERI EHESH ESESP EEEST ETETH FIFIN FJFJI FKFLK FRFRA FOFRO
FMFSM GAGAB GBGBR GEGEO GGGGY GHGHA GIGIB GNGIN GPGLP GMGMB GWGNB GQGNQ GRGRC GDGRD GLGRL
GTGTM GFGUF GUGUM GYGUY HKHKG HMHMD HNHND HRHRV HTHTI HUHUN IDIDN IMIMN ININD IOIOT IEIRL
IRIRN IQIRQ ISISL ILISR ITITA JMJAM JEJEY JOJOR JPJPN KZKAZ KEKEN KGKGZ KHKHM KIKIR KNKNA
KRKOR KWKWT LALAO LBLBN LRLBR LYLBY LCLCA LILIE LKLKA LSLSO LTLTU LULUX LVLVA MOMAC MAMAR
MCMCO MDMDA MGMDG MVMDV MXMEX MHMHL MKMKD MLMLI MTMLT MMMMR MEMNE MNMNG MPMNP MZMOZ MRMRT
MSMSR MQMTQ MUMUS MWMWI MYMYS YTMYT NANAM NCNCL NENER NFNFK NGNGA NINIC NUNIU NLNLD NONOR
NPNPL NRNRU NZNZL OMOMN PKPAK PAPAN PNPCN PEPER PHPHL PWPLW PGPNG PLPOL PRPRI KPPRK PTPRT
PYPRY PSPSE PFPYF QAQAT REREU ROROU RURUS RWRWA SASAU SDSDN SNSEN SGSGP GSSGS SJSJM SBSLB
SLSLE SVSLV SMSMR SOSOM PMSPM RSSRB SSSSD STSTP SRSUR SKSVK SISVN SESWE SZSWZ SCSYC SYSYR
TCTCA TDTCD TGTGO THTHA TJTJK TKTKL TMTKM TLTLS TOTON TTTTO TNTUN TRTUR TVTUV TWTWN TZTZA
UGUGA UAUKR UMUMI UYURY USUSA UZUZB VAVAT VCVCT VEVEN VGVGB VIVIR VNVNM VUVUT WFWLF WSWSM
YEYEM ZAZAF ZMZMB ZWZWE
"""
# A country's two-letter code, lower case, to the country's one name.
COUNTRY_CODES: dict[str, str] = {
    pair[:2].lower(): REGION_NAMES[pair[2:].lower()] for pair in _ALPHA_2.split()
}
