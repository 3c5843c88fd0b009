# dbswarm's image for the indexed path (docs/kubernetes.md): the coordinator and the workers
# are the same image, `dbswarm coordinate ...` and `dbswarm worker ...`.
# Build: docker build -t dbswarm:latest .
FROM python:3.11-slim-bookworm
# mysqlclient (the MySQL/MariaDB binding's default C driver) builds against libmariadb
RUN apt-get update \
 && apt-get install -y --no-install-recommends build-essential pkg-config libmariadb-dev libmariadb3 \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /opt/dbswarm
COPY pyproject.toml README.md ./
COPY shared ./shared
RUN pip install --no-cache-dir ".[drivers,mysqlclient]" \
 && apt-get purge -y build-essential pkg-config libmariadb-dev && apt-get autoremove -y
# no secret is baked in: the object store's keys and the database password come from the
# environment (Kubernetes Secrets by reference)
USER 65534:65534
ENTRYPOINT ["dbswarm"]
CMD ["--help"]
