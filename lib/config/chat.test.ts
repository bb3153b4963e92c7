import { describe, expect, it } from "vitest";
import { loadChatConfig } from "./chat";

describe("chat model configuration", () => {
  it("has no chat model when CHAT_MODEL_CONFIG is unset or blank", () => {
    expect(loadChatConfig({})).toEqual({ model: null, contextChunks: 6 });
    expect(loadChatConfig({ CHAT_MODEL_CONFIG: "  " })).toEqual({ model: null, contextChunks: 6 });
  });

  it("fills defaults around base_url and model", () => {
    const cfg = loadChatConfig({ CHAT_MODEL_CONFIG: '{"base_url":"http://127.0.0.1:11434/v1","model":"llama3.1"}' });
    expect(cfg).toEqual({
      model: { base_url: "http://127.0.0.1:11434/v1", model: "llama3.1", max_context_chunks: 6, temperature: 0.2, max_tokens: 1024, request_timeout_ms: 120_000 },
      contextChunks: 6,
    });
  });

  it("takes every documented field", () => {
    const cfg = loadChatConfig({
      CHAT_MODEL_CONFIG: JSON.stringify({ base_url: "https://api.openai.com/v1", api_key: "sk-x", model: "gpt-4o-mini", max_context_chunks: 3, temperature: 0, max_tokens: 300, request_timeout_ms: 5000 }),
    });
    expect(cfg.model).toMatchObject({ api_key: "sk-x", max_context_chunks: 3, temperature: 0, max_tokens: 300, request_timeout_ms: 5000 });
    expect(cfg.contextChunks).toBe(3);
  });

  it("fails naming the variable and the field", () => {
    expect(() => loadChatConfig({ CHAT_MODEL_CONFIG: "{model: x}" })).toThrow(/CHAT_MODEL_CONFIG is not valid JSON/);
    expect(() => loadChatConfig({ CHAT_MODEL_CONFIG: '{"base_url":"http://h/v1"}' })).toThrow(/CHAT_MODEL_CONFIG\.model/);
    expect(() => loadChatConfig({ CHAT_MODEL_CONFIG: '{"base_url":"not a url","model":"m"}' })).toThrow(/CHAT_MODEL_CONFIG\.base_url/);
    expect(() => loadChatConfig({ CHAT_MODEL_CONFIG: '{"base_url":"http://h/v1","model":"m","temperature":3}' })).toThrow(/CHAT_MODEL_CONFIG\.temperature/);
    expect(() => loadChatConfig({ CHAT_MODEL_CONFIG: '{"base_url":"http://h/v1","model":"m","max_context_chunks":0}' })).toThrow(/CHAT_MODEL_CONFIG\.max_context_chunks/);
    expect(() => loadChatConfig({ CHAT_MODEL_CONFIG: '{"base_url":"http://h/v1","model":"m","temprature":0.5}' })).toThrow(/CHAT_MODEL_CONFIG\.\(root\).*temprature/);
  });
});
