-- The run store's tables as the foundation (4ef6597:pipelines/store.py) made them: no journal, 13 columns in runs.
-- Frozen: a database from before migrations, which the migrations must bring to head. Never edit.
-- events.id was INTEGER on SQLite (a rowid, numbered by the database) and SERIAL on PostgreSQL: {integer_key} stands for it.

CREATE TABLE runs (
	id VARCHAR(64) NOT NULL,
	claim TEXT NOT NULL,
	protocol VARCHAR(64) NOT NULL,
	status VARCHAR(16) NOT NULL,
	verdict VARCHAR(64),
	confidence FLOAT,
	created_at FLOAT NOT NULL,
	finished_at FLOAT,
	config TEXT NOT NULL,
	app_version VARCHAR(32) NOT NULL,
	model_calls INTEGER NOT NULL,
	tokens_in INTEGER NOT NULL,
	tokens_out INTEGER NOT NULL,
	PRIMARY KEY (id)
);
CREATE INDEX ix_runs_created_at ON runs (created_at);
CREATE INDEX ix_runs_protocol ON runs (protocol);
CREATE INDEX ix_runs_status ON runs (status);
CREATE TABLE events (
	id {integer_key} NOT NULL,
	run_id VARCHAR(64) NOT NULL,
	seq INTEGER NOT NULL,
	type VARCHAR(64) NOT NULL,
	at FLOAT NOT NULL,
	payload TEXT NOT NULL,
	PRIMARY KEY (id),
	UNIQUE (run_id, seq),
	FOREIGN KEY(run_id) REFERENCES runs (id) ON DELETE CASCADE
);
CREATE INDEX ix_events_run_id ON events (run_id);
