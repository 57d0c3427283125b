"""What OpenAI-compatible servers really say, for the protocol tests (tests/activities/test_servers.py).

RECORDED bodies were captured from the real server on this machine (llama-cpp-python[server]
0.3.36 with SmolLM2-135M-Instruct, `make test-models` builds it); the paths inside them are the
only thing shortened. DOCUMENTED bodies follow the servers' own documentation and source where
they do not install here (llama.cpp's C++ `llama-server`, Ollama, vLLM, LM Studio, LiteLLM,
OpenAI's reasoning models). docs/configuration.md, "Local models", says which server was checked
which way.
"""

from __future__ import annotations

# --- llama-cpp-python[server] 0.3.36: RECORDED ---------------------------------------------------

#: HTTP 500 for `response_format: {"type": "json_schema", ...}` (its pydantic model allows only
#: "text" and "json_object"; the FastAPI validation error is caught and re-raised as a 500).
LLAMA_CPP_PYTHON_JSON_SCHEMA_500 = {
    "error": {
        "message": "1 validation error:\n  {'type': 'literal_error', 'loc': ('body', 'response_format', "
        "'type'), 'msg': \"Input should be 'text' or 'json_object'\", 'input': 'json_schema', "
        "'ctx': {'expected': \"'text' or 'json_object'\"}}\n\n  File \"/.../llama_cpp/server/app.py\", "
        "line 376, in create_chat_completion\n    POST /v1/chat/completions",
        "type": "internal_server_error",
        "param": None,
        "code": None,
    }
}

#: HTTP 400 for a prompt longer than `--n_ctx` (here 2048 tokens).
LLAMA_CPP_PYTHON_OVERFLOW_400 = {
    "error": {
        "message": "This model's maximum context length is 2048 tokens. However, you requested 3231 "
        "tokens (2231 in the messages, 1000 in the completion). Please reduce the length of the "
        "messages or completion.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}

#: GET /v1/models: no context window anywhere (llama-cpp-python states none; /props,
#: /api/show and /api/v0/models/... answer 404 {"detail": "Not Found"}).
LLAMA_CPP_PYTHON_MODELS = {
    "object": "list",
    "data": [
        {"id": "smollm2-135m-instruct", "object": "model", "owned_by": "me", "permissions": []}
    ],
}

# --- llama.cpp's llama-server (C++): DOCUMENTED (tools/server/README.md) -------------------------

LLAMA_SERVER_PROPS = {
    "default_generation_settings": {"n_ctx": 4096, "params": {"n_predict": -1}},
    "total_slots": 1,
    "model_path": "/models/model.gguf",
    "chat_template": "...",
}
LLAMA_SERVER_OVERFLOW_400 = {
    "error": {
        "code": 400,
        "message": "the request exceeds the available context size, try increasing it",
        "type": "exceed_context_size_error",
        "n_prompt_tokens": 5120,
        "n_ctx": 4096,
    }
}

# --- Ollama: DOCUMENTED (ollama/docs/api.md, POST /api/show) -------------------------------------

OLLAMA_SHOW = {
    "modelfile": "FROM /root/.ollama/models/blobs/sha256-...",
    "parameters": 'stop "<|eot_id|>"',
    "template": "{{ .Prompt }}",
    "details": {"family": "llama", "parameter_size": "8.0B", "quantization_level": "Q4_0"},
    "model_info": {"general.architecture": "llama", "llama.context_length": 131072},
}
OLLAMA_SHOW_NUM_CTX = {**OLLAMA_SHOW, "parameters": 'num_ctx 16384\nstop "<|eot_id|>"'}

# --- vLLM and LM Studio: DOCUMENTED ----------------------------------------------------------------

VLLM_MODELS = {
    "object": "list",
    "data": [{"id": "Qwen/Qwen2.5-7B-Instruct", "object": "model", "max_model_len": 32768}],
}
LM_STUDIO_MODEL = {
    "id": "qwen2.5-7b-instruct",
    "object": "model",
    "type": "llm",
    "state": "loaded",
    "max_context_length": 32768,
    "loaded_context_length": 8192,
}

# --- OpenAI reasoning models (o-series, gpt-5): DOCUMENTED (the API's error bodies) ---------------

OPENAI_NO_TEMPERATURE_400 = {
    "error": {
        "message": "Unsupported value: 'temperature' does not support 0.2 with this model. Only the "
        "default (1) value is supported.",
        "type": "invalid_request_error",
        "param": "temperature",
        "code": "unsupported_value",
    }
}
OPENAI_NO_MAX_TOKENS_400 = {
    "error": {
        "message": "Unsupported parameter: 'max_tokens' is not supported with this model. Use "
        "'max_completion_tokens' instead.",
        "type": "invalid_request_error",
        "param": "max_tokens",
        "code": "unsupported_parameter",
    }
}

# --- LiteLLM's proxy: DOCUMENTED (it relays the backend's refusal inside its own 400) --------------

LITELLM_JSON_SCHEMA_400 = {
    "error": {
        "message": "litellm.BadRequestError: OpenAIException - Error code: 400 - {'error': "
        "{'message': \"'response_format.type' : value is not one of the allowed values "
        "['text','json_object']\", 'type': 'invalid_request_error'}}",
        "type": None,
        "param": None,
        "code": "400",
    }
}
