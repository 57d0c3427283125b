# The research worker (the default command) and the web app (`python -m starter serve`, the compose
# file's `web` service) in one image. Scale either with `docker compose up --scale worker=N`.
FROM python:3.11-slim
WORKDIR /app
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
COPY pyproject.toml README.md ./
COPY workflows ./workflows
COPY activities ./activities
COPY storage ./storage
# starter/ includes the web app's templates and static files (package data in pyproject.toml).
COPY starter ./starter
COPY telemetry ./telemetry
COPY settings ./settings
COPY worker.py ./
EXPOSE 8000
RUN pip install . && useradd --create-home research && mkdir -p /app/.data && chown research /app/.data
USER research
CMD ["python", "worker.py"]
