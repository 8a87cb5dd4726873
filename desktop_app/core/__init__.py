"""Qt-free core: LLM layer, agent engine, context management, DAG mode, tools and storage."""
