// Generated from docs/openapi.json by `npm run -s generate -w @corral/client`. Do not edit.

export interface paths {
    "/healthz": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Ready to serve */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @enum {string} */
                            status: "ok";
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/metrics": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Prometheus metrics */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content?: never;
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List API keys, newest first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    /** @description Opaque cursor from next_cursor */
                    cursor?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["ApiKey"][];
                            has_more: boolean;
                            next_cursor: string | null;
                        };
                    };
                };
            };
        };
        put?: never;
        /** Create an API key (the full key is returned once) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        name: string;
                        description?: string;
                        scope: components["schemas"]["ApiKeyScope"];
                        /**
                         * @default live
                         * @enum {string}
                         */
                        environment?: "live" | "test";
                        /** @description When the key stops working; null or absent: never */
                        expires_at?: string | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["CreatedApiKey"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/keys/{key_id}/revoke": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Revoke an API key; it stops working at once */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    key_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @enum {boolean} */
                            success: true;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/keys/{key_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        post?: never;
        /** Delete a revoked API key */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    key_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @enum {boolean} */
                            success: true;
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List agents, newest first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    /** @description Opaque cursor from next_cursor */
                    cursor?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["Agent"][];
                            has_more: boolean;
                            next_cursor: string | null;
                        };
                    };
                };
            };
        };
        put?: never;
        /** Register an agent */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        name: string;
                        description?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description UUID, either case; stored and returned lowercase */
                            id: string;
                            /** @description UUID, either case; stored and returned lowercase */
                            org_id: string;
                            name: string;
                            slug: string;
                            description: string | null;
                            /** @enum {string} */
                            status: "active" | "inactive";
                            public_key: string | null;
                            kill_switch_active: boolean;
                            /**
                             * Format: date-time
                             * @description RFC 3339 timestamp (UTC)
                             */
                            created_at: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get an agent */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Agent"];
                    };
                };
            };
        };
        /** Update an agent; omitted fields keep their values */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        name?: string;
                        description?: string | null;
                        /** @enum {string} */
                        status?: "active" | "inactive";
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Agent"];
                    };
                };
            };
        };
        post?: never;
        /** Delete an agent (soft: its telemetry is kept); people only (JWT admin+) */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @enum {boolean} */
                            success: true;
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/kill-switch": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Engage or release the kill switch; people only (JWT admin+) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        active: boolean;
                        reason?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Agent"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/public-key": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Register the agent's Ed25519 public key (SDK) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description hex Ed25519 public key (32 bytes) */
                        public_key: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            registered: boolean;
                            public_key: string;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/audit-log": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Every mutation in the organization, newest first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    /** @description Opaque cursor from next_cursor */
                    cursor?: string;
                    action?: string;
                    target_id?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["AuditEntry"][];
                            has_more: boolean;
                            next_cursor: string | null;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/policies": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List policy versions, newest first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    /** @description Opaque cursor from next_cursor */
                    cursor?: string;
                };
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["PolicyVersion"][];
                            has_more: boolean;
                            next_cursor: string | null;
                        };
                    };
                };
            };
        };
        put?: never;
        /** Create the next policy version from JSON or YAML; optionally activate it */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id: string;
                };
                cookie?: never;
            };
            /** @description Exactly one of policy and yaml_content */
            requestBody: {
                content: {
                    "application/json": {
                        /** @description The policy document as JSON */
                        policy?: components["schemas"]["PolicyDocumentInput"];
                        /** @description The same document as YAML */
                        yaml_content?: string;
                        description?: string;
                        /** @default false */
                        activate?: boolean;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PolicyVersion"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/policies/active": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The active policy version (404 when none) */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PolicyVersion"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/policies/{version}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One policy version */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id: string;
                    version: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PolicyVersion"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/policies/{version}/activate": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Make a version active and push it to connected agents */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id: string;
                    version: number;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["PolicyVersion"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/policy-keys": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Public keys that verify policy envelopes; the current key first, retired keys while their envelopes may live */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            keys: components["schemas"]["PolicyKey"][];
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/auth/session": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The current session and its CSRF token */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            subject: string;
                            /** @description UUID, either case; stored and returned lowercase */
                            org_id: string;
                            /** @enum {string} */
                            role: "viewer" | "member" | "admin" | "owner";
                            /**
                             * Format: date-time
                             * @description RFC 3339 timestamp (UTC)
                             */
                            expires_at: string;
                            /** @description Send as X-CSRF-Token on every mutation authorized by the session cookie */
                            csrf_token: string;
                        };
                    };
                };
            };
        };
        put?: never;
        /**
         * Start a cookie session for the dashboard from a Bearer JWT
         * @description Sets the HttpOnly cookie corral_session. Mutations authorized by the cookie must send X-CSRF-Token: csrf_token.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            subject: string;
                            /** @description UUID, either case; stored and returned lowercase */
                            org_id: string;
                            /** @enum {string} */
                            role: "viewer" | "member" | "admin" | "owner";
                            /**
                             * Format: date-time
                             * @description RFC 3339 timestamp (UTC)
                             */
                            expires_at: string;
                            /** @description Send as X-CSRF-Token on every mutation authorized by the session cookie */
                            csrf_token: string;
                        };
                    };
                };
            };
        };
        /** End the cookie session */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @enum {boolean} */
                            success: true;
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/control": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Control stream for the SDK (SSE): init, kill_switch, policy_updated */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description text/event-stream: init, then kill_switch and policy_updated; `: heartbeat` every 15 s */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/control/dashboard-stream": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The control stream for the dashboard (cookie session), plus `telemetry` when new events of the agent are stored */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description text/event-stream: init, then kill_switch and policy_updated; `: heartbeat` every 15 s */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "text/event-stream": string;
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/control/state": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Polling fallback: kill switch and the active policy, signed now */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            kill_switch_active: boolean;
                            policy_envelope: components["schemas"]["DsseEnvelope"] | null;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/dashboard/stats": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Call counts and latency over a window
         * @description `to` defaults to now and `from` to 24 hours before `to`; the window may not exceed 31 days.
         */
        get: {
            parameters: {
                query?: {
                    /** @description RFC 3339 timestamp (UTC) */
                    from?: string;
                    /** @description RFC 3339 timestamp (UTC) */
                    to?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            total_calls: number;
                            allowed_calls: number;
                            denied_calls: number;
                            error_calls: number;
                            avg_latency_ms: number;
                            p50_latency_ms: number;
                            p95_latency_ms: number;
                            p99_latency_ms: number;
                            /** @description Agents that sent at least one event in the window */
                            active_agents: number;
                            /** @description Registered agents, deleted ones excluded */
                            total_agents: number;
                            /** @description GenAI input tokens (cached ones included) */
                            input_tokens: number;
                            /** @description GenAI output tokens (reasoning ones included) */
                            output_tokens: number;
                            cached_input_tokens: number;
                            reasoning_tokens: number;
                            /** @description Cost of the GenAI calls with a price; null when none has one */
                            cost_usd: number | null;
                            /** @description GenAI calls of models without a price, not in cost_usd */
                            unpriced_calls: number;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/dashboard/agents": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Per-agent call counts and latency
         * @description `to` defaults to now and `from` to 24 hours before `to`; the window may not exceed 31 days.
         */
        get: {
            parameters: {
                query?: {
                    /** @description RFC 3339 timestamp (UTC) */
                    from?: string;
                    /** @description RFC 3339 timestamp (UTC) */
                    to?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description UUID, either case; stored and returned lowercase */
                            agent_id: string;
                            agent_name: string;
                            total_calls: number;
                            denied_calls: number;
                            error_calls: number;
                            avg_latency_ms: number;
                            p50_latency_ms: number;
                            p95_latency_ms: number;
                            /** @description GenAI input tokens (cached ones included) */
                            input_tokens: number;
                            /** @description GenAI output tokens (reasoning ones included) */
                            output_tokens: number;
                            cached_input_tokens: number;
                            reasoning_tokens: number;
                            /** @description Cost of the GenAI calls with a price; null when none has one */
                            cost_usd: number | null;
                            /** @description GenAI calls of models without a price, not in cost_usd */
                            unpriced_calls: number;
                        }[];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/dashboard/models": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * GenAI calls, tokens and cost per provider and model
         * @description `to` defaults to now and `from` to 24 hours before `to`; the window may not exceed 31 days. cost_usd comes from the price table (built-in or CORRAL_PRICES_FILE); null when a call of the model has no price. See docs/otlp.md.
         */
        get: {
            parameters: {
                query?: {
                    /** @description RFC 3339 timestamp (UTC) */
                    from?: string;
                    /** @description RFC 3339 timestamp (UTC) */
                    to?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description gen_ai system (provider), `unknown` when the call did not say */
                            provider: string;
                            /** @description The model that answered, else the one asked for; `unknown` when neither was said */
                            model: string;
                            calls: number;
                            input_tokens: number;
                            output_tokens: number;
                            cached_input_tokens: number;
                            reasoning_tokens: number;
                            /** @description From the price table; null when a call of this model has no price */
                            cost_usd: number | null;
                        }[];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/dashboard/hosts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Most-called hosts
         * @description `to` defaults to now and `from` to 24 hours before `to`; the window may not exceed 31 days. `agent_id` narrows it to one agent, counted from its stored events; another organization's agent, like an unknown one, has none.
         */
        get: {
            parameters: {
                query?: {
                    /** @description RFC 3339 timestamp (UTC) */
                    from?: string;
                    /** @description RFC 3339 timestamp (UTC) */
                    to?: string;
                    limit?: number;
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            url_host: string;
                            call_count: number;
                            allowed_count: number;
                            denied_count: number;
                            error_count: number;
                        }[];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/dashboard/timeseries": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Zero-filled call counts per bucket
         * @description `to` defaults to now and `from` to 24 hours before `to`; the window may not exceed 31 days. The bucket width (1m, 5m, 15m, 30m, 1h, 3h, 6h, 12h or 1d) is the narrowest giving at most 120 buckets.
         */
        get: {
            parameters: {
                query?: {
                    /** @description RFC 3339 timestamp (UTC) */
                    from?: string;
                    /** @description RFC 3339 timestamp (UTC) */
                    to?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /**
                             * Format: date-time
                             * @description RFC 3339 timestamp (UTC)
                             */
                            bucket: string;
                            total: number;
                            allowed: number;
                            denied: number;
                            error: number;
                        }[];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/dashboard/rule-hits": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /**
         * Most-matched policy rules (by deny_reason)
         * @description `to` defaults to now and `from` to 24 hours before `to`; the window may not exceed 31 days. `agent_id` narrows it to one agent, counted from its stored events; another organization's agent, like an unknown one, has none.
         */
        get: {
            parameters: {
                query?: {
                    /** @description RFC 3339 timestamp (UTC) */
                    from?: string;
                    /** @description RFC 3339 timestamp (UTC) */
                    to?: string;
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            rule_name: string;
                            total: number;
                            /** @description Calls the rule blocked (enforce mode) */
                            denied: number;
                            /** @description Calls the rule would have blocked (dry_run mode): reported as allowed */
                            dry_run: number;
                        }[];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/dashboard/events": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Stored events, newest first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    /** @description Opaque cursor from next_cursor */
                    cursor?: string;
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id?: string;
                    method?: string;
                    url_host?: string;
                    status_code?: number;
                    policy_result?: "allowed" | "denied" | "error";
                    /** @description RFC 3339 timestamp (UTC) */
                    from?: string;
                    /** @description RFC 3339 timestamp (UTC) */
                    to?: string;
                    /** @description W3C trace id */
                    trace_id?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["DashboardEvent"][];
                            has_more: boolean;
                            next_cursor: string | null;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/dashboard/events/{request_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** One stored event by its request_id */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    request_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["DashboardEvent"];
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/alerts": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** List alert rules, newest first, each with its agent's name */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    /** @description Opaque cursor from next_cursor */
                    cursor?: string;
                };
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["Alert"][];
                            has_more: boolean;
                            next_cursor: string | null;
                        };
                    };
                };
            };
        };
        put?: never;
        /**
         * Create an alert rule
         * @description A webhook rule answers with its signing secret (`webhook_secret`) here only; keep it. An `action` takes an admin (JWT).
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description UUID, either case; stored and returned lowercase */
                        agent_id: string;
                        /**
                         * @description error_rate and denied_rate: percent of calls; latency_p99: milliseconds; volume_drop: percent fewer calls than the previous window
                         * @enum {string}
                         */
                        condition_type: "error_rate" | "latency_p99" | "denied_rate" | "volume_drop";
                        /** @description greater than 0; at most 100 for percent conditions, 3,600,000 for latency_p99 */
                        threshold: number;
                        window_minutes?: number;
                        /** @enum {string} */
                        channel: "email" | "webhook";
                        /** @description an email address for email, an http(s) URL for webhook */
                        channel_target: string;
                        cooldown_minutes?: number;
                        /** @description setting or clearing it takes an admin (JWT) */
                        action?: "kill_switch" | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["AlertWithSecret"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/alerts/{alert_id}": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Get an alert rule */
        get: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    alert_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Alert"];
                    };
                };
            };
        };
        /**
         * Update an alert rule; omitted fields keep their values
         * @description A rule moved to the webhook channel gets a new secret. A webhook rule answers with its signing secret (`webhook_secret`) here only; keep it.
         */
        put: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    alert_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /** @description UUID, either case; stored and returned lowercase */
                        agent_id?: string;
                        /**
                         * @description error_rate and denied_rate: percent of calls; latency_p99: milliseconds; volume_drop: percent fewer calls than the previous window
                         * @enum {string}
                         */
                        condition_type?: "error_rate" | "latency_p99" | "denied_rate" | "volume_drop";
                        /** @description greater than 0; at most 100 for percent conditions, 3,600,000 for latency_p99 */
                        threshold?: number;
                        window_minutes?: number;
                        /** @enum {string} */
                        channel?: "email" | "webhook";
                        /** @description an email address for email, an http(s) URL for webhook */
                        channel_target?: string;
                        cooldown_minutes?: number;
                        /** @description setting or clearing it takes an admin (JWT) */
                        action?: "kill_switch" | null;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["AlertWithSecret"];
                    };
                };
            };
        };
        post?: never;
        /** Delete an alert rule with its history and notifications */
        delete: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    alert_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @enum {boolean} */
                            success: true;
                        };
                    };
                };
            };
        };
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/alerts/{alert_id}/toggle": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Enable or disable an alert rule */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    alert_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        is_enabled: boolean;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Alert"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/alerts/{alert_id}/mute": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Mute notifications until a time
         * @description The rule keeps evaluating and recording transitions; no email or webhook is sent until `until`. The reason goes to the audit log.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    alert_id: string;
                };
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        /**
                         * Format: date-time
                         * @description RFC 3339, in the future, at most 365 days ahead
                         */
                        until: string;
                        /** @description recorded in the audit log */
                        reason?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Alert"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/alerts/{alert_id}/unmute": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /** Clear a mute; the next transition notifies */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    alert_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["Alert"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/alerts/{alert_id}/rotate-secret": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Rotate a webhook rule's signing secret
         * @description A webhook rule answers with its signing secret (`webhook_secret`) here only; keep it. The previous secret keeps signing beside the new one for 24 hours.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    alert_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["AlertWithSecret"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/alerts/{alert_id}/test": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Send a test notification to the rule's channel now
         * @description One attempt, whatever the mute, cooldown or state; the answer says how it went, and the notification list keeps it.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    alert_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": components["schemas"]["AlertNotification"];
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/alerts/{alert_id}/history": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Firing and resolved transitions, newest first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    /** @description Opaque cursor from next_cursor */
                    cursor?: string;
                };
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    alert_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["AlertHistoryRecord"][];
                            has_more: boolean;
                            next_cursor: string | null;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/alerts/{alert_id}/notifications": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** Notifications and every delivery attempt, newest first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    /** @description Opaque cursor from next_cursor */
                    cursor?: string;
                };
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    alert_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: components["schemas"]["AlertNotification"][];
                            has_more: boolean;
                            next_cursor: string | null;
                        };
                    };
                };
            };
        };
        put?: never;
        post?: never;
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/agents/{agent_id}/instances": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        /** The agent's SDK instances and the state each has applied, newest first */
        get: {
            parameters: {
                query?: {
                    limit?: number;
                    /** @description Opaque cursor from next_cursor */
                    cursor?: string;
                };
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id: string;
                };
                cookie?: never;
            };
            requestBody?: never;
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            data: {
                                instance_id: string;
                                hostname: string;
                                sdk_version: string;
                                /** @enum {string} */
                                transport: "sse" | "poll";
                                applied_at: string | null;
                                /** @description Reported within the last 90 seconds, and not closed since */
                                connected: boolean;
                                policy_version: number | null;
                                policy_sequence: number | null;
                                policy_hash: string | null;
                                kill_switch_active: boolean;
                                /**
                                 * Format: date-time
                                 * @description RFC 3339 timestamp (UTC)
                                 */
                                last_seen_at: string;
                                /** @description When the instance reported that it was closing; null while it runs */
                                closed_at: string | null;
                            }[];
                            has_more: boolean;
                            next_cursor: string | null;
                        };
                    };
                };
            };
        };
        put?: never;
        /** Report what one SDK instance has applied (SDK API key, events:write) */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path: {
                    /** @description UUID, either case; stored and returned lowercase */
                    agent_id: string;
                };
                cookie?: never;
            };
            /** @description What one SDK process has applied; sent when it changes, every 30 s as a heartbeat, and once when it closes */
            requestBody: {
                content: {
                    "application/json": {
                        /** @description The SDK process's own id (the SDK uses a random UUID) */
                        instance_id: string;
                        hostname: string;
                        sdk_version: string;
                        /** @enum {string} */
                        transport: "sse" | "poll";
                        /** @description When the SDK applied its current state; null before it received any. A time ahead of the service clock is stored as the service time. */
                        applied_at: string | null;
                        policy_version: number | null;
                        policy_sequence: number | null;
                        policy_hash: string | null;
                        kill_switch_active: boolean;
                        /** @description True in the last report of an instance that is closing: it is shown as not connected at once. Any later report of the same instance clears it. */
                        closed?: boolean;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            instance_id: string;
                            hostname: string;
                            sdk_version: string;
                            /** @enum {string} */
                            transport: "sse" | "poll";
                            applied_at: string | null;
                            /** @description Reported within the last 90 seconds, and not closed since */
                            connected: boolean;
                            policy_version: number | null;
                            policy_sequence: number | null;
                            policy_hash: string | null;
                            kill_switch_active: boolean;
                            /**
                             * Format: date-time
                             * @description RFC 3339 timestamp (UTC)
                             */
                            last_seen_at: string;
                            /** @description When the instance reported that it was closing; null while it runs */
                            closed_at: string | null;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
    "/v1/telemetry": {
        parameters: {
            query?: never;
            header?: never;
            path?: never;
            cookie?: never;
        };
        get?: never;
        put?: never;
        /**
         * Ingest a batch of 1 to 1,000 telemetry events (all or nothing)
         * @description Optional headers: x-corral-signature (hex Ed25519 over the raw body), x-corral-public-key (hex, registers the agent's first key). Unsigned batches are refused on the ingest host. Re-sent request_ids are acknowledged and ignored.
         */
        post: {
            parameters: {
                query?: never;
                header?: never;
                path?: never;
                cookie?: never;
            };
            requestBody: {
                content: {
                    "application/json": {
                        events: components["schemas"]["TelemetryEvent"][];
                        sdk_version?: string;
                    };
                };
            };
            responses: {
                /** @description Default Response */
                200: {
                    headers: {
                        [name: string]: unknown;
                    };
                    content: {
                        "application/json": {
                            /** @description Events acknowledged, re-sent duplicates included */
                            accepted: number;
                        };
                    };
                };
            };
        };
        delete?: never;
        options?: never;
        head?: never;
        patch?: never;
        trace?: never;
    };
}
export type webhooks = Record<string, never>;
export interface components {
    schemas: {
        Agent: {
            /** @description UUID, either case; stored and returned lowercase */
            id: string;
            /** @description UUID, either case; stored and returned lowercase */
            org_id: string;
            name: string;
            slug: string;
            description: string | null;
            /** @enum {string} */
            status: "active" | "inactive";
            public_key: string | null;
            kill_switch_active: boolean;
            active_policy_mode?: ("enforce" | "dry_run") | null;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            created_at: string;
        };
        ApiKey: {
            /** @description UUID, either case; stored and returned lowercase */
            id: string;
            /** @description UUID, either case; stored and returned lowercase */
            org_id: string;
            name: string;
            description: string | null;
            key_prefix: string;
            /** @enum {string} */
            environment: "live" | "test";
            scope: components["schemas"]["ApiKeyScope"];
            last_used_at: string | null;
            expires_at: string | null;
            revoked_at: string | null;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            created_at: string;
        };
        ApiKeyScope: {
            /** @enum {string} */
            kind: "all";
        } | {
            /** @enum {string} */
            kind: "read_only";
        } | {
            /** @enum {string} */
            kind: "restricted";
            resources: {
                /** @enum {string} */
                agents?: "read" | "write";
                /** @enum {string} */
                policies?: "read" | "write";
                /** @enum {string} */
                events?: "read" | "write";
                /** @enum {string} */
                alerts?: "read" | "write";
            };
        };
        CreatedApiKey: {
            /** @description UUID, either case; stored and returned lowercase */
            id: string;
            name: string;
            /** @description The full key. Shown only in this response. */
            key: string;
            key_prefix: string;
            scope: components["schemas"]["ApiKeyScope"];
            /** @enum {string} */
            environment: "live" | "test";
            expires_at: string | null;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            created_at: string;
        };
        AuditEntry: {
            /** @description UUID, either case; stored and returned lowercase */
            id: string;
            /** @description UUID, either case; stored and returned lowercase */
            org_id: string;
            /** @enum {string} */
            actor_type: "user" | "api_key" | "system" | "alert";
            /** @description JWT subject, API key id, alert rule id, or "system" */
            actor_id: string;
            /** @description dotted verb, e.g. agent.kill_switch */
            action: string;
            target_type: string;
            target_id: string;
            reason: string | null;
            details: {
                [key: string]: unknown;
            } | null;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            created_at: string;
        };
        /** @description A policy document: mode (default dry_run), default (required) and rules (default none) */
        PolicyDocumentInput: {
            /** @enum {string} */
            mode?: "enforce" | "dry_run";
            /** @enum {string} */
            default: "allow" | "deny";
            rules?: components["schemas"]["PolicyRule"][];
        };
        PolicyDocument: {
            /** @enum {string} */
            mode: "enforce" | "dry_run";
            /** @enum {string} */
            default: "allow" | "deny";
            rules: components["schemas"]["PolicyRule"][];
        };
        /** @description A name and exactly one of allow, deny, limit */
        PolicyRule: {
            name: string;
            allow?: components["schemas"]["Matcher"];
            deny?: components["schemas"]["Matcher"];
            limit?: components["schemas"]["RateLimit"];
        };
        /** @description Every given part must match */
        Matcher: {
            method?: ("GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS" | "CONNECT" | "TRACE")[];
            /** @description glob over host/path: `*` one segment, `**` any number */
            url?: string;
            headers?: components["schemas"]["HeaderMatch"][];
            body?: components["schemas"]["BodyMatch"][];
        };
        /** @description Exactly one of exact, prefix, contains, present */
        HeaderMatch: {
            /** @description header name, case-insensitive */
            name: string;
            exact?: string;
            prefix?: string;
            contains?: string;
            present?: boolean;
        };
        /** @description One of exact, in, prefix, contains; or min and/or max */
        BodyMatch: {
            /** @description e.g. $.amount or $.items[0].sku */
            jsonpath: string;
            exact?: string | number | boolean | null;
            in?: (string | number | boolean | null)[];
            prefix?: string;
            contains?: string;
            min?: number;
            max?: number;
        };
        RateLimit: {
            calls_per_minute: number;
            /** @enum {string} */
            per: "endpoint" | "global";
            match?: components["schemas"]["Matcher"];
        };
        PolicyVersion: {
            /** @description UUID, either case; stored and returned lowercase */
            id: string;
            /** @description UUID, either case; stored and returned lowercase */
            agent_id: string;
            version: number;
            /** @description sha256 of the RFC 8785 canonical JSON of the policy document */
            hash: string;
            /** @enum {string} */
            mode: "enforce" | "dry_run";
            description: string | null;
            policy: components["schemas"]["PolicyDocument"];
            is_active: boolean;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            created_at: string;
            /** @description last time this version was made active */
            activated_at: string | null;
        };
        DsseEnvelope: {
            payloadType: string;
            /** @description base64 of the policy bundle JSON */
            payload: string;
            signatures: {
                keyid: string;
                /** @description base64 Ed25519 signature over the DSSE PAE */
                sig: string;
            }[];
        };
        PolicyBundle: {
            /** @description UUID, either case; stored and returned lowercase */
            agent_id: string;
            version: number;
            /** @description Counts the agent's activations (1, 2, …, never reused): a rollback carries a higher sequence than the bundles before it, so SDKs refuse a bundle whose sequence is lower than the one applied */
            sequence: number;
            /** @description sha256 of the RFC 8785 canonical JSON of the policy document */
            hash: string;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            issued_at: string;
            policy: components["schemas"]["PolicyDocument"];
        };
        PolicyKey: {
            keyid: string;
            /** @enum {string} */
            algorithm: "ed25519";
            /** @description hex Ed25519 public key */
            public_key: string;
        };
        TelemetryEvent: {
            /** @description UUID, either case; stored and returned lowercase */
            agent_id: string;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            timestamp: string;
            /** @description Unique per organization; a re-sent event is ignored */
            request_id: string;
            /** @description HTTP method */
            method: string;
            url_host: string;
            /** @description Path template, identifiers replaced by {id} */
            url_path: string;
            /** @description HTTP status; stored as null for denied calls, which never reached the API */
            status_code: number | null;
            latency_ms?: number | null;
            /** @enum {string} */
            policy_result: "allowed" | "denied" | "error";
            deny_reason?: string | null;
            trace_id?: string | null;
            span_id?: string | null;
            gen_ai?: components["schemas"]["GenAiInfo"] | null;
        };
        DashboardEvent: {
            request_id: string;
            /** @description UUID, either case; stored and returned lowercase */
            agent_id: string;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            timestamp: string;
            method: string;
            url_host: string;
            url_path: string;
            status_code: number | null;
            latency_ms: number | null;
            /** @enum {string} */
            policy_result: "allowed" | "denied" | "error";
            deny_reason: string | null;
            trace_id: string | null;
            span_id: string | null;
            gen_ai: components["schemas"]["GenAiInfo"] | null;
        };
        GenAiInfo: {
            /** @description The provider: openai, anthropic, … */
            system?: string;
            /** @description chat, text_completion, embeddings, … */
            operation?: string;
            request_model?: string;
            response_model?: string;
            input_tokens?: number;
            output_tokens?: number;
            cached_input_tokens?: number;
            reasoning_tokens?: number;
            /** @description What the call cost, where the sender knows it */
            cost_usd?: number;
        };
        ErrorBody: {
            error: {
                /** @description Stable machine-readable code */
                code: string;
                message: string;
                details?: components["schemas"]["FieldError"][];
                request_id?: string;
            };
        };
        FieldError: {
            field: string;
            message: string;
        };
        Alert: {
            /** @description UUID, either case; stored and returned lowercase */
            id: string;
            /** @description UUID, either case; stored and returned lowercase */
            org_id: string;
            /** @description UUID, either case; stored and returned lowercase */
            agent_id: string;
            /** @description the monitored agent's name */
            agent_name: string;
            /**
             * @description error_rate and denied_rate: percent of calls; latency_p99: milliseconds; volume_drop: percent fewer calls than the previous window
             * @enum {string}
             */
            condition_type: "error_rate" | "latency_p99" | "denied_rate" | "volume_drop";
            threshold: number;
            window_minutes: number;
            /** @enum {string} */
            channel: "email" | "webhook";
            /** @description email address or webhook URL */
            channel_target: string;
            cooldown_minutes: number;
            action: "kill_switch" | null;
            /** @description notifications delivered for firing and resolved transitions (tests excluded) */
            notification_count: number;
            is_enabled: boolean;
            /**
             * @description the state of the last evaluation
             * @enum {string}
             */
            state: "ok" | "firing";
            /** @description the value of the last evaluation; null before the first */
            last_value: number | null;
            last_evaluated_at: string | null;
            last_triggered_at: string | null;
            muted_until: string | null;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            created_at: string;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            updated_at: string;
        };
        AlertWithSecret: {
            /** @description UUID, either case; stored and returned lowercase */
            id: string;
            /** @description UUID, either case; stored and returned lowercase */
            org_id: string;
            /** @description UUID, either case; stored and returned lowercase */
            agent_id: string;
            /** @description the monitored agent's name */
            agent_name: string;
            /**
             * @description error_rate and denied_rate: percent of calls; latency_p99: milliseconds; volume_drop: percent fewer calls than the previous window
             * @enum {string}
             */
            condition_type: "error_rate" | "latency_p99" | "denied_rate" | "volume_drop";
            threshold: number;
            window_minutes: number;
            /** @enum {string} */
            channel: "email" | "webhook";
            /** @description email address or webhook URL */
            channel_target: string;
            cooldown_minutes: number;
            action: "kill_switch" | null;
            /** @description notifications delivered for firing and resolved transitions (tests excluded) */
            notification_count: number;
            is_enabled: boolean;
            /**
             * @description the state of the last evaluation
             * @enum {string}
             */
            state: "ok" | "firing";
            /** @description the value of the last evaluation; null before the first */
            last_value: number | null;
            last_evaluated_at: string | null;
            last_triggered_at: string | null;
            muted_until: string | null;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            created_at: string;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            updated_at: string;
            /** @description whsec_… signing secret of a webhook rule. Returned only when it is made: at creation, on a switch to the webhook channel, and on rotation */
            webhook_secret?: string;
        };
        AlertHistoryRecord: {
            /** @description UUID, either case; stored and returned lowercase */
            id: string;
            /** @description UUID, either case; stored and returned lowercase */
            alert_id: string;
            /** @enum {string} */
            state: "firing" | "resolved";
            /** @description the value that caused the transition, in the unit of the condition */
            value: number;
            threshold: number;
            /**
             * @description error_rate and denied_rate: percent of calls; latency_p99: milliseconds; volume_drop: percent fewer calls than the previous window
             * @enum {string}
             */
            condition_type: "error_rate" | "latency_p99" | "denied_rate" | "volume_drop";
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            window_start: string;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            window_end: string;
            /**
             * @description queued: a notification went to the outbox; otherwise why none did
             * @enum {string}
             */
            notification: "queued" | "muted" | "cooldown";
            action: "kill_switch_engaged" | null;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            created_at: string;
        };
        AlertNotification: {
            /** @description UUID, either case; stored and returned lowercase */
            id: string;
            /** @description UUID, either case; stored and returned lowercase */
            alert_id: string;
            history_id: string | null;
            /** @enum {string} */
            kind: "firing" | "resolved" | "test";
            /** @enum {string} */
            channel: "email" | "webhook";
            recipient: string;
            /** @enum {string} */
            status: "delivered" | "failed" | "retrying";
            /** @description attempts made so far */
            attempts: number;
            /** @description what the last failed attempt ran into */
            error: string | null;
            next_attempt_at: string | null;
            delivered_at: string | null;
            attempt_log: components["schemas"]["NotificationAttempt"][];
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            created_at: string;
        };
        NotificationAttempt: {
            attempt: number;
            /**
             * @description delivered; retrying: failed, another attempt is scheduled; failed: no attempt follows
             * @enum {string}
             */
            status: "delivered" | "failed" | "retrying";
            http_status: number | null;
            error: string | null;
            duration_ms: number;
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            at: string;
        };
        WebhookPayload: {
            /** @enum {string} */
            type: "alert.firing" | "alert.resolved" | "alert.test";
            /**
             * Format: date-time
             * @description RFC 3339 timestamp (UTC)
             */
            timestamp: string;
            data: {
                /** @description UUID, either case; stored and returned lowercase */
                org_id: string;
                alert: {
                    /** @description UUID, either case; stored and returned lowercase */
                    id: string;
                    /**
                     * @description error_rate and denied_rate: percent of calls; latency_p99: milliseconds; volume_drop: percent fewer calls than the previous window
                     * @enum {string}
                     */
                    condition_type: "error_rate" | "latency_p99" | "denied_rate" | "volume_drop";
                    threshold: number;
                    window_minutes: number;
                    action: "kill_switch" | null;
                };
                agent: {
                    /** @description UUID, either case; stored and returned lowercase */
                    id: string;
                    name: string;
                    url: string;
                };
                /** @enum {string} */
                state: "firing" | "resolved" | "test";
                value: number | null;
                threshold: number;
                /** @enum {string} */
                unit: "percent" | "ms";
                window_start: string | null;
                window_end: string | null;
                history_id: string | null;
                /** @description one line for people: what fired, the value and the threshold */
                summary: string;
            };
        };
    };
    responses: never;
    parameters: never;
    requestBodies: never;
    headers: never;
    pathItems: never;
}
export type $defs = Record<string, never>;
export type operations = Record<string, never>;
