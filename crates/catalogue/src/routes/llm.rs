//! The LLM proxy: an OpenAI-compatible chat API billed in account credits, served beside the
//! route table because its wire format is OpenAI's (its own request and error bodies) rather
//! than the catalogue's. Its paths and what the documents say of it live here once; the
//! proxy's router mounts these paths, and OpenAPI, the catalogue, the discovery manifest and
//! `llms.txt` describe them ([`crate::openapi::llm_operations`]).

/// The OpenAI-compatible base path: an OpenAI SDK's `base_url` is this under svc's address.
pub const BASE_PATH: &str = "/api/v1/llm";
/// Chat completions, streamed or not.
pub const CHAT_COMPLETIONS_PATH: &str = "/api/v1/llm/chat/completions";
/// The models, with their prices.
pub const MODELS_PATH: &str = "/api/v1/llm/models";

/// What a chat completion is, in one line.
pub const CHAT_COMPLETIONS_SUMMARY: &str = "OpenAI-compatible chat completions (streamed or not, tools included), \
    billed in account credits by the tokens used.";

/// How a chat completion is paid for.
pub const CHAT_COMPLETIONS_DESCRIPTION: &str = "OpenAI's chat-completions wire format: point an OpenAI SDK's base_url \
    at /api/v1/llm and use the account's LLM token (POST /api/account/llm-token) as its api_key. Each call holds what \
    its prompt and largest answer could cost, then is charged the usage the model reports (prices per model: GET \
    /api/v1/llm/models). When the credits do not cover a call the answer is 402; with the account's automatic top-up \
    on, that 402 carries an x402 challenge, and retrying with PAYMENT-SIGNATURE buys the credits and runs the call. \
    Errors are OpenAI's error body.";

/// What the models route lists.
pub const MODELS_SUMMARY: &str = "The models the LLM proxy serves, in OpenAI's list shape, each with its context, \
    largest answer and USD price per million input, cached-input and output tokens. Free.";
