"""What a running bot exposes about itself: Prometheus metrics."""
