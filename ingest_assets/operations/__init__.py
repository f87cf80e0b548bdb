"""What an operator sees and is told, without Dagster: the hub overview (per provider its days with counts, last
good day, last failure, registry problems) and its HTML status page, the failures recorded per provider, the
registry's health, and notices sent by e-mail and webhook."""
