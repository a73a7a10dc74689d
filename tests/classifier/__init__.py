"""Tests of the multi-hop classifier package and service (multihop_classifier/)."""
