import type { Environment } from "../domain.js";

export interface MockTask {
  task_id: string;
  title: string;
  description: string | null;
  status: "pending" | "completed";
}

export interface MockDatabase {
  tasks: Record<string, MockTask>;
  users: Record<string, { user_id: string; name: string; tasks: string[] }>;
}

type Result = { output: string; error: boolean };

/**
 * The tau2 mock tools, reimplemented from their schemas and docstrings over one copy of the
 * database: a task tracker whose users own tasks. Errors (unknown user or task, a status other
 * than pending/completed, a missing title) are tool errors and leave the database unchanged.
 */
export class MockEnvironment implements Environment {
  private readonly database: MockDatabase;

  constructor(database: MockDatabase) {
    this.database = structuredClone(database);
  }

  call(name: string, args: Record<string, unknown>): Result {
    switch (name) {
      case "create_task":
        return this.createTask(args);
      case "get_users":
        return ok(Object.values(this.database.users));
      case "update_task_status":
        return this.updateTaskStatus(args);
      case "transfer_to_human_agents":
        if (typeof args.summary !== "string") return failure("summary must be a string");
        return { output: "Transfer successful", error: false };
      default:
        return failure(`unknown tool ${name}`);
    }
  }

  state(): MockDatabase {
    return structuredClone(this.database);
  }

  private createTask(args: Record<string, unknown>): Result {
    const { user_id: userId, title, description } = args;
    if (typeof userId !== "string") return failure("user_id must be a string");
    if (typeof title !== "string" || title.trim() === "") return failure("title must be a non-empty string");
    if (description !== undefined && description !== null && typeof description !== "string") {
      return failure("description must be a string");
    }
    const user = this.database.users[userId];
    if (!user) return failure(`user ${userId} not found`);
    const taskId = `task_${Object.keys(this.database.tasks).length + 1}`;
    const task: MockTask = { task_id: taskId, title, description: description ?? null, status: "pending" };
    this.database.tasks[taskId] = task;
    user.tasks.push(taskId);
    return ok(task);
  }

  private updateTaskStatus(args: Record<string, unknown>): Result {
    const { task_id: taskId, status } = args;
    if (typeof taskId !== "string") return failure("task_id must be a string");
    if (status !== "pending" && status !== "completed") {
      return failure(`status must be "pending" or "completed", not ${JSON.stringify(status ?? null)}`);
    }
    const task = this.database.tasks[taskId];
    if (!task) return failure(`task ${taskId} not found`);
    task.status = status;
    return ok(task);
  }
}

function ok(value: unknown): Result {
  return { output: JSON.stringify(value), error: false };
}

function failure(message: string): Result {
  return { output: `Error: ${message}`, error: true };
}
