"""`searchpulse collect`: the engine fed by a Kafka consumer group, with checkpoints.

* ``connection`` — client options (security included) and the topics searchpulse owns;
* ``checkpoints`` — the atomic checkpoint of one pipeline (group + instance): counters and the
  offsets they cover, on a compacted topic;
* ``partition`` — one engine per assigned partition, its offsets and its replay state;
* ``consumer`` — the consumer loop and the rebalance listener;
* ``health`` — consumer health metrics; ``run`` — process wiring; ``producer`` — keyed producing.
"""
