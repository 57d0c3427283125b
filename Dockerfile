# The research worker. Scale it with `docker compose up --scale worker=N`.
FROM python:3.11-slim
WORKDIR /app
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
COPY pyproject.toml README.md ./
COPY workflows ./workflows
COPY activities ./activities
COPY starter ./starter
COPY worker.py config.py ./
RUN pip install . && useradd --create-home research && mkdir -p /app/.data && chown research /app/.data
USER research
CMD ["python", "worker.py"]
