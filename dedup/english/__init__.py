"""The English language pack: field names, facts in prose, spellings and the verifier's rules.

The core (``dedup/``) receives an ``EnglishPack`` through the ``LanguagePack`` protocol and
never imports this package. Free text in another language is not read by these rules: the
text reader (``index/coverage.py``) sends it to exact comparison.
"""

from tooldedup.dedup.english.pack import LANGUAGES, EnglishPack
from tooldedup.dedup.english.rule_verifier import RuleFamily, RuleVerifier

__all__ = ["LANGUAGES", "EnglishPack", "RuleFamily", "RuleVerifier"]
