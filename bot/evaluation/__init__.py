"""`kb eval`: run a question set through the real pipeline and measure what the user gets.

``questions`` parses the JSONL format, ``matching`` decides (pure) whether gold paragraphs and answer
keywords were found, ``observers`` wrap the knowledge-base and engine ports to see every search and model
role, ``runner`` asks each question in a fresh conversation, ``summary`` aggregates per type, and
``report`` / ``html_report`` print the table and write the self-contained HTML page.
"""
