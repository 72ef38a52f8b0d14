"""Queue consumers behind tooldedup: check, call, persist (report), commit (ack).

The runner is broker-neutral; each broker has its adapter and its extra:
``tooldedup-client[redis]``, ``[rabbitmq]``, ``[nats]``. The adapters are imported from
their own modules (``tooldedup_client.consumer.redis_streams``, ``.rabbitmq``,
``.nats_jetstream``), so this package needs no broker library.
"""

from tooldedup_client.consumer.broker import (
    Broker,
    BrokerRefused,
    BrokerUnavailable,
    ConsumerRefused,
)
from tooldedup_client.consumer.budget import TokenBudget, tokens_in_result
from tooldedup_client.consumer.dead_letters import (
    Ambiguous,
    Classifier,
    DeadLetter,
    HandlerFailure,
    Poison,
    Retryable,
    Route,
    classify_failure,
    default_route,
    triage,
)
from tooldedup_client.consumer.key_recipes import (
    KeyFunction,
    MissingKey,
    field_key,
    nats_key,
    parse_key_fields,
    rabbitmq_key,
    redis_key,
)
from tooldedup_client.consumer.message import Delivery, Message, TokenTally
from tooldedup_client.consumer.runner import ConsumerRunner, DuplicateHook, Handler
from tooldedup_client.consumer.runner_settings import ConsumerMetrics, ConsumerSettings

__all__ = [
    "Ambiguous",
    "Broker",
    "BrokerRefused",
    "BrokerUnavailable",
    "Classifier",
    "ConsumerMetrics",
    "ConsumerRefused",
    "ConsumerRunner",
    "ConsumerSettings",
    "DeadLetter",
    "Delivery",
    "DuplicateHook",
    "Handler",
    "HandlerFailure",
    "KeyFunction",
    "Message",
    "MissingKey",
    "Poison",
    "Retryable",
    "Route",
    "TokenBudget",
    "TokenTally",
    "classify_failure",
    "default_route",
    "field_key",
    "nats_key",
    "parse_key_fields",
    "rabbitmq_key",
    "redis_key",
    "tokens_in_result",
    "triage",
]
