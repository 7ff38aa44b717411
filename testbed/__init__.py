"""Real services for the integration tests and `make` targets: started on free loopback ports
from the Debian packages (Prometheus, Alertmanager), each in its own temporary directory."""
