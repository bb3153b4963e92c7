import type { Metadata } from "next";
import { redirect } from "next/navigation";
import { currentPagePrincipal } from "@/lib/auth/session";
import { chatConfig } from "@/lib/config/chat";
import { embeddingStatus } from "@/lib/embeddings";
import { ChatClient } from "@/components/chat/chat-client";

export const metadata: Metadata = { title: "Chat" };

export default async function ChatPage() {
  const principal = await currentPagePrincipal();
  if (!principal) redirect("/signin");
  const { configured, reason, model } = embeddingStatus();
  return (
    <div className="page" style={{ maxWidth: 880 }}>
      <h1>Chat</h1>
      <p className="muted">Questions are answered from {principal.orgName}&apos;s indexed documents only.</p>
      <ChatClient chatModel={chatConfig().model?.model ?? null} embedding={{ configured, reason, model }} />
    </div>
  );
}
