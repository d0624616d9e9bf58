"""A token bucket rate limiter."""

import time
from dataclasses import dataclass

DEFAULT_RATE = 10  # tokens per second


@dataclass
class Bucket:
    """Holds tokens; refills continuously."""

    rate: float = DEFAULT_RATE
    tokens: float = 0.0

    def take(self, n=1):
        text = """
def not_a_function():
    pass
"""
        if self.tokens >= n:
            self.tokens -= n
            return True
        return False


# Shared by the request handlers.
def limiter_for(user_id: str,
                rate: float = DEFAULT_RATE) -> Bucket:
    return Bucket(rate=rate)


async def drain(bucket):
    while bucket.tokens > 0:
        bucket.take()


if __name__ == "__main__":
    print(limiter_for("demo"))
